package trials

import (
	"github.com/rfc2544/rfc2544/internal/afxdp"
)

// XDPProbe is what this kernel lets the xdp transport do.
type XDPProbe struct {
	// Refused maps each receive stamp (Config.XDPStamp: "metadata",
	// "head", "user") the kernel's verifier refuses to its reason.
	Refused map[string]string `json:"refused,omitempty"`
	// Stamp is the receive stamp the default takes: the first of
	// metadata, head and user not refused; empty when none loads.
	Stamp string `json:"stamp,omitempty"`
}

// ProbeXDP loads the xdp transport's XDP program with each receive stamp
// and unloads it (root). err, wrapping ErrNotSupported, says when AF_XDP's
// programs cannot load here at all.
func ProbeXDP() (XDPProbe, error) {
	refused, err := afxdp.ProbeStamps()
	if err != nil {
		return XDPProbe{}, err
	}
	p := XDPProbe{Refused: map[string]string{}}
	for _, k := range []afxdp.Stamp{afxdp.StampMeta, afxdp.StampHead, afxdp.StampUser} {
		if why, ok := refused[k]; ok {
			p.Refused[k.String()] = why
		} else if p.Stamp == "" {
			p.Stamp = k.String()
		}
	}
	return p, nil
}
