// Package agent is the remote side of a two-host test: the control protocol
// between a controller (`rfc2544 run --agent HOST`, tester port A) and an
// agent (`rfc2544 agent`, tester port B) on the far end of a path, its
// authentication, the agent's safety policy, the agent's server and the
// controller's client.
//
// The protocol (PROTOCOL.md beside this file) is versioned messages over one
// TCP connection: a 12-byte header (magic "2544", version, type, length) and
// a strictly decoded JSON body of at most wire.MaxBody bytes; package wire holds
// the messages, their bounds and their decoding. A session starts
// with a challenge-response handshake over a shared secret (HMAC-SHA256 over
// both sides' nonces and the transcript), after which every message carries
// an HMAC under a per-session key and a sequence number, so nothing can be
// replayed, reordered or injected. Per trial the controller sends
// TrialSetup, Start and Stop; the agent answers Ready, Started and Results.
// Both sides send Keepalive; a peer silent for the peer timeout is lost.
// Not silent is a peer whose messages wait in the receiver's kernel behind
// a segment the path dropped (a trial overloading the DUT the control
// connection crosses): the read waits while such segments keep arriving,
// up to 8 timeouts (conn.readFull).
//
// A remotely controlled traffic generator must not become anyone's weapon.
// The agent sends test traffic only to the controller's own address (the
// TCP peer address: no message can name another destination), at most at its
// own --max-rate, for a bounded duration, to one controller at a time, and
// stops sending within 2 s of losing the controller.
//
// The traffic itself is behind the Traffic interface: the agent calls
// StartReceive and StartSend and collects trials.StreamResult counters from
// them. Package agenttest has a fake for tests; UDPTraffic implements it on
// the UDP transport of package trials (trials.RemotePort's Receive and
// Send), enforcing the destination, rate and deadline again at the socket
// level. On the controller side, Dial returns a Client whose Setup, Start
// and Stop drive one trial, and NewTester turns a Client into an
// rfc2544.Tester: a trials.RemoteEngine (the trial's sequence and the merge
// of both hosts' counters) over the Client as its Remote, a local UDP port
// A plus the agent as port B (A->B, B->A with TesterConfig.Reverse, or
// both), latency timed round trip on frames the agent reflects (Result.Paths.Latency "round-trip"). A lost agent
// surfaces as ErrAgentLost; the Tester's Run then fails with an error that
// also matches ErrTrialInvalid ("trial invalid: agent lost — not DUT loss"),
// never a lossy result, and does not retry (the session is gone): the
// rfc2544 runner stops with that message.
//
// agent imports trials and framing, never rfc2544 or cmd.
package agent
