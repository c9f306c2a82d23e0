package trials

import "testing"

// TestLimitsRetry: a receiver's drops that a stall explains make a lasting
// limit worth a rerun; drops beyond that, or any other lasting reason, do
// not; transient stalls are both transient and worth a rerun.
func TestLimitsRetry(t *testing.T) {
	const fps = 63000 // 50 ms of it: 3,150 frames
	for _, tc := range []struct {
		name                   string
		build                  func(l *limits)
		transient, retry, none bool
	}{
		{name: "nothing", build: func(*limits) {}, none: true},
		{name: "a generator stall", build: func(l *limits) { l.add(true, []string{"stall"}) }, transient: true, retry: true},
		{name: "a receiver stall", build: func(l *limits) { l.addRx(rxStall(1346, fps), "drops") }, retry: true},
		{name: "a receiver too slow", build: func(l *limits) { l.addRx(rxStall(3151, fps), "drops") }},
		{name: "a receiver stall and a ceiling", build: func(l *limits) {
			l.addRx(rxStall(1346, fps), "drops")
			l.add(false, []string{"ceiling"})
		}},
		{name: "a generator and a receiver stall", build: func(l *limits) {
			l.add(true, []string{"stall"})
			l.addRx(rxStall(10, fps), "drops")
		}, retry: true},
		{name: "drops with nothing sent", build: func(l *limits) { l.addRx(rxStall(1, 0), "drops") }},
	} {
		var l limits
		tc.build(&l)
		var res Result
		l.apply(&res)
		if res.TesterLimited == tc.none || res.TesterLimitTransient != tc.transient || res.TesterLimitRetry != tc.retry {
			t.Errorf("%s: limited %v transient %v retry %v; want %v %v %v", tc.name, res.TesterLimited, res.TesterLimitTransient, res.TesterLimitRetry,
				!tc.none, tc.transient, tc.retry)
		}
	}
}
