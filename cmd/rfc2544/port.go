package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/rfc2544/rfc2544/internal/netdev"
)

// inspectPort looks a port's interface up in its network namespace
// (netdev.Inspect), with errors naming the port's flags. It sends nothing.
func inspectPort(p portConfig) (netdev.Info, error) {
	info, err := netdev.Inspect(p.netns, p.iface)
	switch {
	case err == nil:
		return info, nil
	case errors.Is(err, errors.ErrUnsupported):
		return info, fmt.Errorf("port %s: the raw transport needs Linux, not %s; use --transport sim to try the tool", p.name, runtime.GOOS)
	case errors.Is(err, netdev.ErrNoNamespace):
		return info, usagef("--netns-%s %s: no such network namespace; list them with 'ip netns list'", p.name, p.netns)
	case errors.Is(err, netdev.ErrNoInterface):
		where, hint := fmt.Sprintf("network namespace %q", p.netns), " -n "+p.netns
		if p.netns == "" {
			where, hint = "the host's network namespace", ", or give its namespace with --netns-"+p.name
		}
		return info, usagef("--port-%s %s: no such interface in %s; list interfaces with 'ip link'%s", p.name, p.iface, where, hint)
	case errors.Is(err, os.ErrPermission):
		return info, fmt.Errorf("port %s: %w (run as root)", p.name, err)
	}
	return info, fmt.Errorf("port %s: %w", p.name, err)
}
