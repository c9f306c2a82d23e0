//go:build linux

package trials

import (
	"context"
	"fmt"
	"net"
	"runtime"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/afxdp"
	"github.com/rfc2544/rfc2544/internal/nsutil"
)

// GenerateXDP is Generate over the xdp transport: one AF_XDP socket (TX
// only) per queue, socket q on queue q of the interface (c.Queues, one by
// default), frames prebuilt in its UMEM and stamped in place (afxdp
// Generate), queue q's thread pinned to the q-th CPU the process may use
// when there are several.
// GenConfig's NoTxRing and QdiscPath do not apply. Paths.XDP says which
// AF_XDP path ran.
func GenerateXDP(ctx context.Context, c GenConfig) (GenResult, error) {
	var res GenResult
	if err := c.check(); err != nil {
		return res, err
	}
	if m := afxdp.MaxFrameSize(afxdp.DefaultChunkSize); c.FrameSize > m {
		return res, fmt.Errorf("gen frame %d: the xdp transport carries frames up to %d bytes: use --transport raw for jumbo frames", c.FrameSize, m)
	}
	var socks []*afxdp.Socket
	var src net.HardwareAddr
	err := nsutil.Do(c.Namespace, func() error {
		ifi, err := net.InterfaceByName(c.Interface)
		if err != nil {
			return fmt.Errorf("no interface %q: %w (check --dev and --ns)", c.Interface, err)
		}
		src = ifi.HardwareAddr
		if c.Queues > 1 {
			socks, err = afxdp.OpenQueues(afxdp.Config{Interface: c.Interface, TX: true}, c.Queues)
			return err
		}
		s, err := afxdp.Open(afxdp.Config{Interface: c.Interface, TX: true})
		socks = []*afxdp.Socket{s}
		return err
	})
	if err != nil {
		return res, fmt.Errorf("gen on %s: %w", c.Interface, err)
	}
	defer afxdp.CloseQueues(socks)
	for q, s := range socks {
		tpl, err := framing.NewTemplate(framing.TemplateConfig{SrcMAC: src, DstMAC: c.DstMAC,
			SrcIP: c.SrcIP, DstIP: c.DstIP, SrcPort: framing.DefaultSrcPort + uint16(q), DstPort: c.DstPort, FrameSize: c.FrameSize})
		if err != nil {
			return res, err
		}
		if err := s.PrepareTx([]afxdp.TxStream{{ID: 1, Templates: []*framing.Template{tpl}}}); err != nil {
			return res, err
		}
	}
	p := xdpPaths(socks[0].Features(), socks[0].Features())
	p.RX, p.Timestamps = "", ""
	res, err = genQueues(c, func(q int, c GenConfig) (GenResult, error) {
		if len(socks) > 1 {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			defer txThread(allowedCPU(q))()
		}
		g, err := socks[q].Generate(ctx, 0, 1, c.RateFPS, c.Duration, c.Batch)
		return GenResult{Sent: g.Sent, Seconds: g.Seconds, OfferedFPS: g.OfferedFPS, Paths: p}, err
	})
	if err != nil && ctx.Err() == nil {
		return res, err
	}
	return res, ctx.Err()
}
