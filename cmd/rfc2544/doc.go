// Command rfc2544 runs RFC 2544 benchmarks (throughput, latency, frame loss,
// back-to-back) against a device under test, or against its built-in virtual
// lab, and renders the results.
//
// The main job, as root:
//
//	rfc2544 run --lab
//
// creates a temporary lab (network namespaces with a Linux-router DUT), runs
// the quick profile over every test and frame size, prints the tables, and
// removes the lab, also on Ctrl-C or error.
//
// Verbs: run (all selected tests), throughput, latency, loss and b2b (one
// test), lab (build and remove labs), calibrate (the tester's own ceiling),
// report and compare (re-render results). Every verb takes --help.
//
// A run writes into its output folder (--out): journal.jsonl, one JSON line
// per finished trial after a header holding the effective plan, synced to
// disk; results.json; report.txt and report.html. --resume DIR continues an
// interrupted run by replaying the journal's trials to the procedures, which
// ask for the same trials in the same order, and running the rest.
//
// Exit codes: 0 ok, 1 test error, 2 usage error, 3 a tester-limited result,
// 130 interrupted (partial results written).
//
// The work is the libraries': rig (ports, safety checks, the plan, the
// tester, the output folder and its journal, the firewall sweep,
// calibration), rfc2544 (plans, their flags, the Runner), reports, lab and
// trials/agent (the agent's flags and server); this package is flags, help,
// progress, signals and exit codes, one file per verb.
//
// Tests call run(ctx, args, stdout, stderr) directly; openTester and
// openEngine are the seams where they substitute the traffic engine.
package main
