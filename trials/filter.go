package trials

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// rxSnapLen is how many bytes of a test frame the receive filter keeps:
// Ethernet (with one VLAN tag), IPv6, UDP and the signature fit.
const rxSnapLen = 128

// sigMagic is the first byte of every test signature (package framing).
const sigMagic = 0xC5

// receiveFilter is the classic BPF program of a receiving port: it accepts
// ARP (learning, and answering the DUT) and IPv4/UDP or IPv6/UDP frames whose
// payload starts with the signature magic and runID, truncated to rxSnapLen,
// and drops everything else in the kernel. Frames with a VLAN tag still
// inline are accepted too. runID 0 accepts only ARP (the idle filter).
func receiveFilter(runID uint8) ([]bpf.RawInstruction, error) {
	want := uint32(sigMagic)<<8 | uint32(runID)
	const (
		accept = rxSnapLen
	)
	prog := []bpf.Instruction{
		/* 0 */ bpf.LoadAbsolute{Off: 12, Size: 2},
		/* 1 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: etherTypeARP, SkipTrue: 14}, // → accept (16)
		/* 2 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: etherTypeIPv4, SkipFalse: 6}, // → 9 (ipv6?)
		// IPv4: UDP, not a fragment, payload at 14 + IHL*4 + 8.
		/* 3 */ bpf.LoadAbsolute{Off: 23, Size: 1},
		/* 4 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: 17, SkipFalse: 12}, // → drop (17)
		/* 5 */ bpf.LoadAbsolute{Off: 20, Size: 2},
		/* 6 */ bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: 0x1fff, SkipTrue: 10}, // fragment → drop
		/* 7 */ bpf.LoadMemShift{Off: 14},
		/* 8 */ bpf.Jump{Skip: 4}, // → 13 (payload check at X+14+8)
		// IPv6: next header UDP, payload at 14 + 40 + 8.
		/* 9 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: etherTypeIPv6, SkipFalse: 7}, // → drop
		/* 10 */ bpf.LoadAbsolute{Off: 20, Size: 1},
		/* 11 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: 17, SkipFalse: 5}, // → drop
		/* 12 */ bpf.LoadConstant{Dst: bpf.RegX, Val: 40},
		/* 13 */ bpf.LoadIndirect{Off: 14 + 8, Size: 2},
		/* 14 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: want, SkipFalse: 2}, // → drop
		/* 15 */ bpf.RetConstant{Val: accept},
		/* 16 */ bpf.RetConstant{Val: accept},
		/* 17 */ bpf.RetConstant{Val: 0},
	}
	if runID == 0 {
		prog = []bpf.Instruction{
			bpf.LoadAbsolute{Off: 12, Size: 2},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: etherTypeARP, SkipFalse: 1},
			bpf.RetConstant{Val: accept},
			bpf.RetConstant{Val: 0},
		}
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("assemble receive filter: %w", err)
	}
	return raw, nil
}
