package agent

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"

	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// UDPTraffic is the agent's Traffic on the UDP transport of package trials:
// kernel UDP sockets (recvmmsg, sendmmsg, kernel receive timestamps). It is
// what `rfc2544 agent` runs. The run id in the frames' signatures is
// wire.RunID of the trial id, on both hosts.
//
// Besides the agent's policy check, it enforces the limits at the socket
// level: it sends only to Trial.Peer (every send socket is connected to it
// and checked with getpeername; reflected frames go to the same address
// only), never faster than Trial.MaxSendFPS (B->A streams plus reflection),
// and never after Trial.Deadline; it counts and reflects only datagrams
// whose source is the controller's address.
type UDPTraffic struct {
	// Config holds the sockets' namespace and buffers.
	Config trials.RemotePort
}

var _ Traffic = (*UDPTraffic)(nil)

func checkFamily(t Trial) error {
	if t.Spec.IPv6 != t.Listen.Addr().Unmap().Is6() {
		fam := map[bool]string{false: "IPv4", true: "IPv6"}
		return fmt.Errorf("trial ipv6=%v: the controller reached the agent over %s (%v); connect to the agent's %s address for %s trials",
			t.Spec.IPv6, fam[t.Listen.Addr().Unmap().Is6()], t.Listen.Addr(), fam[t.Spec.IPv6], fam[t.Spec.IPv6])
	}
	return nil
}

func unmapped(a netip.AddrPort) netip.AddrPort { return netip.AddrPortFrom(a.Addr().Unmap(), a.Port()) }

// StartReceive implements Traffic.
func (u *UDPTraffic) StartReceive(ctx context.Context, t Trial, reflectTo netip.AddrPort) (Receiver, error) {
	if err := checkFamily(t); err != nil {
		return nil, err
	}
	fps := 0.0
	if reflectTo.IsValid() {
		if reflectTo != t.Peer || reflectTo.Port() < MinControllerPort {
			return nil, fmt.Errorf("reflect to %v: the agent reflects only to the controller %v, port %d and above", reflectTo, t.Peer, MinControllerPort)
		}
		// Reflection gets what the B->A streams leave of the cap.
		rate := max(t.Spec.RateFPS, 0)
		if rc := t.Spec.RateChange; rc != nil {
			rate = max(rate, rc.RateFPS)
		}
		fps = min(t.ReflectFPS, t.MaxSendFPS-rate*float64(len(t.Streams(trials.BtoA))))
		if fps <= 0 {
			reflectTo, fps = netip.AddrPort{}, 0
		}
	}
	r, err := u.Config.Receive(t.Spec, wire.RunID(t.ID), trials.RemoteReceive{
		Listen:     unmapped(t.Listen),
		From:       t.Peer.Addr().Unmap(),
		Reflect:    unmapped(reflectTo),
		ReflectFPS: fps,
		// Without synchronized clocks a one-way latency is off by the
		// clocks' offset; the trend, relative to its own base, is not.
		UnsyncedClock: t.Latency != LatencyOneWay,
	})
	if err != nil {
		return nil, err
	}
	return udpReceiver{r}, nil
}

type udpReceiver struct{ r *trials.RemoteReceiver }

func (r udpReceiver) Port() uint16 { return r.r.Port() }

func (r udpReceiver) Stop(sent map[uint16]uint64) (RecvResult, error) {
	res, err := r.r.Stop(sent)
	return RecvResult{Streams: res.Streams, Reflected: res.Reflected, Paths: res.Paths}, err
}

// StartSend implements Traffic.
func (u *UDPTraffic) StartSend(ctx context.Context, t Trial, dst netip.AddrPort) (Sender, error) {
	if err := checkFamily(t); err != nil {
		return nil, err
	}
	if dst != t.Peer || dst.Port() < MinControllerPort {
		return nil, fmt.Errorf("send to %v: the agent sends only to the controller %v, port %d and above", dst, t.Peer, MinControllerPort)
	}
	s, err := sendConfig(u.Config, t.Streams(trials.BtoA)).Send(ctx, t.Spec, wire.RunID(t.ID), trials.RemoteSend{
		Src:      t.Listen.Addr().Unmap(),
		Dst:      unmapped(dst),
		MaxFPS:   t.MaxSendFPS,
		Deadline: t.Deadline,
	})
	if err != nil {
		return nil, err
	}
	return udpSender{s}, nil
}

type udpSender struct{ s *trials.RemoteSender }

func (s udpSender) Stop() (SendResult, error) {
	res, err := s.s.Stop()
	return SendResult{Streams: res.Streams, TesterLimitReason: res.TesterLimitReason, TesterLimitTransient: res.TesterLimitTransient, Paths: res.Paths}, err
}

// Per-trial bounds of the agent's send side, over all its flows (at most
// MaxFlows sockets): socket send buffers and batch buffers.
const (
	maxSendBufferTotal = trials.DefaultUDPSocketBuffer // bytes of SO_SNDBUF summed over the flows
	minSendBuffer      = 1 << 20
	maxBatchTotal      = 512 // datagram buffers summed over the flows
	minBatch           = 8
)

// sendConfig shares the send side's memory among a trial's flows: with
// many flows each socket gets a smaller send buffer and batch, so a trial's
// memory is bounded whatever its flow count (64 flows of 9216-byte frames:
// 512 batch buffers, 4.7 MB, and 64 MiB of send buffers in all).
func sendConfig(c trials.RemotePort, streams []trials.Stream) trials.RemotePort {
	n := 0
	for _, s := range streams {
		n += max(s.Flows, 1)
	}
	if n <= 1 {
		return c
	}
	if c.SocketBuffer <= 0 {
		c.SocketBuffer = max(minSendBuffer, maxSendBufferTotal/n)
	}
	if b := cmp.Or(c.Batch, 64); b*n > maxBatchTotal {
		c.Batch = max(minBatch, maxBatchTotal/n)
	}
	return c
}
