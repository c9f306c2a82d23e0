package rig

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/rfc2544/rfc2544/internal/netdev"
	"github.com/rfc2544/rfc2544/internal/rate"
)

// Inspected is what CheckPorts read of the ports' interfaces.
type Inspected struct {
	ports []Port
	infos []netdev.Info
}

// CheckPorts looks every port with an interface up in its network namespace
// (not a lab's, not a socket-only one) and refuses one that is down, or that
// carries the namespace's default route unless force (test traffic could
// leave this host's network). It sends nothing.
func CheckPorts(ports []Port, force bool) (*Inspected, error) {
	in := &Inspected{}
	for _, p := range ports {
		if p.FromLab || p.SocketOnly {
			continue
		}
		info, err := inspect(p)
		if err != nil {
			return nil, err
		}
		if info.CarriesDefault && !force {
			return nil, inputf("--port-%s %s: carries the default route of %s, so test traffic could leave this host's network; use a dedicated test port, or pass --force if this is intended",
				p.Side, p.Interface, nsName(p.Netns))
		}
		if !info.Up {
			return nil, inputf("--port-%s %s: the interface is down; bring it up with 'ip link set %s up'", p.Side, p.Interface, p.Interface)
		}
		in.ports, in.infos = append(in.ports, p), append(in.infos, info)
	}
	return in, nil
}

// LineRate is the line rate of the inspected ports: their speed (the
// slower one), or the nominal 1 Gbit/s for veth (netdev.Info.LineRateBps),
// and a note on how it was found. A port whose driver reports no speed is
// an error: give the line rate (--line-rate).
func (in *Inspected) LineRate() (bps float64, note string, err error) {
	var notes []string
	for i, info := range in.infos {
		p := in.ports[i]
		v, nominal := info.LineRateBps()
		switch {
		case nominal:
			notes = append(notes, fmt.Sprintf("%s is a veth: nominal %s", p.Interface, rate.Format(v)))
		case v > 0:
			notes = append(notes, fmt.Sprintf("%s reports %s", p.Interface, rate.Format(v)))
		default:
			drv := info.Driver
			if drv == "" {
				drv = "unknown"
			}
			return 0, "", inputf("--port-%s %s: its driver (%s) reports no link speed, so percentages would have no meaning; give the line rate with --line-rate, e.g. --line-rate 10G",
				p.Side, p.Interface, drv)
		}
		if bps == 0 || v < bps {
			bps = v
		}
	}
	return bps, strings.Join(notes, ", "), nil
}

// inspect looks a port's interface up (netdev.Inspect), with errors naming
// the port's flags.
func inspect(p Port) (netdev.Info, error) {
	info, err := netdev.Inspect(p.Netns, p.Interface)
	switch {
	case err == nil:
		return info, nil
	case errors.Is(err, errors.ErrUnsupported):
		return info, fmt.Errorf("port %s: the raw transport needs Linux, not %s; use --transport sim to try the tool", p.Side, runtime.GOOS)
	case errors.Is(err, netdev.ErrNoNamespace):
		return info, inputf("--netns-%s %s: no such network namespace; list them with 'ip netns list'", p.Side, p.Netns)
	case errors.Is(err, netdev.ErrNoInterface):
		where, hint := fmt.Sprintf("network namespace %q", p.Netns), " -n "+p.Netns
		if p.Netns == "" {
			where, hint = "the host's network namespace", ", or give its namespace with --netns-"+p.Side
		}
		return info, inputf("--port-%s %s: no such interface in %s; list interfaces with 'ip link'%s", p.Side, p.Interface, where, hint)
	case errors.Is(err, os.ErrPermission):
		return info, fmt.Errorf("port %s: %w (run as root)", p.Side, err)
	}
	return info, fmt.Errorf("port %s: %w", p.Side, err)
}

func nsName(ns string) string {
	if ns == "" {
		return "this host"
	}
	return "network namespace " + ns
}
