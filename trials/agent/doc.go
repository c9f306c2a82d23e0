// Package agent is the remote side of a two-host test: the control protocol
// between a controller (`rfc2544 run --agent HOST`, tester port A) and an
// agent (`rfc2544 agent`, tester port B) on the far end of a path, its
// authentication, the agent's safety policy, the agent's server and the
// controller's client.
//
// The protocol (PROTOCOL.md beside this file) is versioned messages over one
// TCP connection: a 12-byte header (magic "2544", version, type, length) and
// a strictly decoded JSON body of at most MaxBody bytes. A session starts
// with a challenge-response handshake over a shared secret (HMAC-SHA256 over
// both sides' nonces and the transcript), after which every message carries
// an HMAC under a per-session key and a sequence number, so nothing can be
// replayed, reordered or injected. Per trial the controller sends
// TrialSetup, Start and Stop; the agent answers Ready, Started and Results.
// Both sides send Keepalive; a peer silent for the peer timeout is lost.
//
// A remotely controlled traffic generator must not become anyone's weapon.
// The agent sends test traffic only to the controller's own address (the
// TCP peer address: no message can name another destination), at most at its
// own --max-rate, for a bounded duration, to one controller at a time, and
// stops sending within 2 s of losing the controller.
//
// The traffic itself is behind the Traffic interface: the agent calls
// StartReceive and StartSend and collects trials.StreamResult counters from
// them. Package agenttest has a fake for tests; the UDP transport of package
// trials implements it for real. On the controller side, Dial returns a
// Client whose Setup, Start and Stop drive one trial; a lost agent surfaces as
// ErrAgentLost, which callers report as "trial invalid (agent lost)", never
// as loss in the device under test.
//
// agent imports trials and framing, never rfc2544 or cmd.
package agent
