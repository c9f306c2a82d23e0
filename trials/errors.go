package trials

import (
	"errors"

	"github.com/rfc2544/rfc2544/internal/notsupported"
)

// ErrNotSupported is wrapped by the errors of what this system lacks: the
// raw and UDP transports, network namespaces and the pause counters off
// Linux. Test for it with errors.Is.
var ErrNotSupported = notsupported.Err

// ErrNoAnswer is wrapped by learning errors when the DUT did not answer.
var ErrNoAnswer = errors.New("no answer from the DUT")
