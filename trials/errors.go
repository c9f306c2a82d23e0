package trials

import "errors"

// ErrNotSupported is wrapped by the errors of what this system lacks: the
// raw and UDP transports and the pause counters off Linux. Test for it with
// errors.Is.
var ErrNotSupported = errors.New("not supported")

// ErrNoAnswer is wrapped by learning errors when the DUT did not answer.
var ErrNoAnswer = errors.New("no answer from the DUT")
