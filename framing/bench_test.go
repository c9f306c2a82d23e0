package framing

import (
	"fmt"
	"testing"
)

// BenchmarkStamp measures stamping a signature into a TX buffer that already
// holds the template (the per-frame cost on the send path), and WriteFrame
// (copy + stamp). ns/op is ns per frame.
func BenchmarkStamp(b *testing.B) {
	for _, f := range []family{families[1], families[4]} {
		for _, size := range []int{MinFrameSize(f.proto(), false), 1518, 9000} {
			tpl, err := NewTemplate(f.config(size))
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, tpl.Len())
			tpl.CopyTo(buf)
			b.Run(fmt.Sprintf("%s/%d/Stamp", f.name, size), func(b *testing.B) {
				b.ReportAllocs()
				sig := Signature{RunID: 1, StreamID: 1}
				for i := 0; b.Loop(); i++ {
					sig.Seq, sig.TxNs = uint64(i), int64(i)
					tpl.Stamp(buf, sig)
				}
			})
			b.Run(fmt.Sprintf("%s/%d/WriteFrame", f.name, size), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(tpl.Len()))
				sig := Signature{RunID: 1, StreamID: 1}
				for i := 0; b.Loop(); i++ {
					sig.Seq, sig.TxNs = uint64(i), int64(i)
					tpl.WriteFrame(buf, sig)
				}
			})
		}
	}
}

// BenchmarkParseFrame measures the receive-side parse of one test frame.
func BenchmarkParseFrame(b *testing.B) {
	for _, f := range []family{families[0], families[5]} {
		for _, size := range []int{MinFrameSize(f.proto(), f.vlan != 0), 1518} {
			frame := stamped(b, f, size, Signature{RunID: 1, Seq: 5})
			b.Run(fmt.Sprintf("%s/%d", f.name, size), func(b *testing.B) {
				b.ReportAllocs()
				var n uint64
				for b.Loop() {
					sig, _, err := ParseFrame(frame)
					if err != nil {
						b.Fatal(err)
					}
					n += sig.Seq
				}
				_ = n
			})
		}
	}
}
