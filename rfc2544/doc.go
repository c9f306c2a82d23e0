// Package rfc2544 is the benchmarking methodology of RFC 2544 §26: throughput
// (binary, step and combo searches, §26.1), latency (§26.2, with RFC 5481
// delay variation), frame loss rate (§26.3), back-to-back frames (§26.4 as
// corrected by RFC 9004) and system recovery (§26.5).
//
// It decides which trials to run and what their results mean, and drives them
// through the small Tester interface, so the same procedures run on the real
// traffic engine (package trials) and on the simulated DUT of this package
// (SimDUT), which makes every procedure testable without root. It never opens
// a socket.
//
// # Running
//
// A Plan says what to run; DefaultPlan gives the two presets ("rfc2544":
// RFC durations; "quick": a demonstration in about three minutes), every
// zero field takes its profile's value (Plan.WithDefaults), and
// Plan.Validate names the YAML field, the value and the fix of any bad
// parameter before a single frame is sent. A Runner runs the plan:
//
//	r := &rfc2544.Runner{Tester: engine, Plan: plan, Observer: journal}
//	res, err := r.Run(ctx)
//
// Run goes test by test, each over every frame size. Loads are percent of
// Plan.LinkBps per stream; a bidirectional plan sends two streams (A->B id 1,
// B->A id 2) and a trial passes only when both do. Throughput runs first at
// a size whenever latency, back-to-back or system recovery need it. Every
// trial is kept as a TrialRecord (the search log commercial testers print)
// and reported to the Observer. On cancellation or a Tester error, Run
// returns the results so far, the interrupted procedure marked Incomplete,
// with the error. The procedures can also be run one at a time
// (Runner.Throughput, Latency, FrameLoss, BackToBack, Recovery).
//
// LoadPlan and ParsePlan read a plan from YAML strictly (an unknown field or
// a value of the wrong kind is an error with its line and the fix);
// Plan.EstimateRun and Plan.Estimate say what a run will cost. The Runner
// refuses any trial above its rate cap (Runner.MaxBps, the line rate when
// zero) before it reaches the Tester. A Journal keeps every finished trial
// on disk as it ends; a ReplayTester answers a resumed run's first trials
// from it, so an interrupted run continues where it stopped.
//
// # Path probe
//
// Unless Plan.NoProbe is set, the first trial of each frame size is a probe:
// ProbeFrames frames at 1% of line rate. When not one frame of a stream comes
// through, the size cannot cross the path (an MTU below it) and every test at
// that size reports zero throughput with the reason, as RFC 2544 §9.4 asks,
// instead of a failed search. A probe the Tester refuses with an error
// wrapping framing.ErrAboveMTU (its own port cannot carry the size: the
// first hop of the path) counts the same way, its reason naming the size
// and the port's limit; the Observer hears of it as a finished trial in
// which nothing was sent. That refusal of any other trial, or with NoProbe,
// stays an error. Probes are kept in Results.Probes.
//
// # Tester limits
//
// A trial the Tester marks tester-limited (it could not offer the intended
// load, or its receiver dropped frames) is neither a pass nor a fail. The
// throughput search stops at one that lost nothing and reports the result as
// "≥ X, tester-limited"; see Runner.Throughput for the other cases. A
// transient limit (the tester's host stalled the generator, which then caught
// up with a burst) is not a ceiling: every procedure runs such a trial again,
// up to trial.retries times, before it counts.
// Results.TrialTime tells how long a run's trials take on real ports, so a
// run on SimDUT is also an estimate of a plan's duration.
package rfc2544
