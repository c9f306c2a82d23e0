package lab

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/rfc2544/rfc2544/internal/notsupported"
	"github.com/rfc2544/rfc2544/lab/relay"
)

// ErrInUse is returned by Up when a lab of that name is already up.
var ErrInUse = errors.New("lab name in use")

// ErrNotSupported is wrapped by the errors of what the system lacks for a
// lab (a kernel feature, or Linux itself). It is the same value as
// trials.ErrNotSupported, so one errors.Is test holds for the lab and the
// engines.
var ErrNotSupported = notsupported.Err

// Up validates cfg, checks privileges and kernel features, then builds the
// lab: namespaces, veth pairs, addresses, routes, forwarding, RPS, qdiscs,
// nftables rules and the relay process, and records its State. Nothing is
// created when validation fails; on any later failure Up removes what it
// made. Leftovers of an Up that was killed are cleared first. Up needs root
// (CAP_NET_ADMIN and CAP_SYS_ADMIN).
func Up(ctx context.Context, cfg Config) (*State, error) { return up(ctx, cfg) }

// Down removes every namespace, link, process and file of the lab called
// name. It is idempotent and works without state (after a crash or a
// half-finished Up), because every name a lab uses derives from its name.
func Down(name string) error { return down(name) }

// DUTCounters reads the kernel DUT's forwarding, link, qdisc and nftables
// counters. Counters only grow; compare two readings.
func (s *State) DUTCounters() (DUTCounters, error) { return s.dutCounters() }

// RunRelay runs the relay DUT of the lab called name in this process until
// SIGTERM, and returns the process exit code. Up starts it in a copy of the
// running binary, entered through relay.Enter; RunRelay is for the hidden
// verb `rfc2544 lab relay --name NAME`, to restart a relay by hand from the
// lab's state file.
func RunRelay(name string) int {
	spec, err := loadRelaySpec(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 1
	}
	return relay.Main(name, spec)
}

// Probe says which kernel features the lab can use on this host (netem,
// tbf, nftables) by trying each in a throw-away network namespace; needs
// root. Up checks the ones a configuration needs the same way.
func Probe() (Features, error) { return probeFeatures() }
