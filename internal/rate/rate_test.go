package rate

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		kinds   []Kind
		want    Rate
		wantErr []string
	}{
		// Bits per second, every spelling.
		{in: "10G", want: Rate{Bits, 10e9}},
		{in: "10g", want: Rate{Bits, 10e9}},
		{in: "2.5G", want: Rate{Bits, 2.5e9}},
		{in: "100M", want: Rate{Bits, 100e6}},
		{in: "100m", want: Rate{Bits, 100e6}},
		{in: "500k", want: Rate{Bits, 500e3}},
		{in: "500K", want: Rate{Bits, 500e3}},
		{in: "1T", want: Rate{Bits, 1e12}},
		{in: "1000000000", want: Rate{Bits, 1e9}},
		{in: "1e9", want: Rate{Bits, 1e9}},
		{in: "1.5e9", want: Rate{Bits, 1.5e9}},
		{in: "50mbit", want: Rate{Bits, 50e6}},
		{in: "50Mbit", want: Rate{Bits, 50e6}},
		{in: "500kbit", want: Rate{Bits, 500e3}},
		{in: "500Kbit", want: Rate{Bits, 500e3}},
		{in: "1.5gbit", want: Rate{Bits, 1.5e9}},
		{in: "1tbit", want: Rate{Bits, 1e12}},
		{in: "50000bit", want: Rate{Bits, 50e3}},
		{in: "10Gbit/s", want: Rate{Bits, 10e9}},
		{in: "50Mbit/s", want: Rate{Bits, 50e6}},
		{in: "50 Mbit/s", want: Rate{Bits, 50e6}},
		{in: "50Mbits/s", want: Rate{Bits, 50e6}},
		{in: "50Mb/s", want: Rate{Bits, 50e6}},
		{in: "1e9bps", want: Rate{Bits, 1e9}},
		{in: "5000bps", want: Rate{Bits, 5000}},
		{in: "1Gibit", want: Rate{Bits, 1 << 30}},
		{in: "1mibit", want: Rate{Bits, 1 << 20}},
		{in: " 40G ", want: Rate{Bits, 40e9}},
		// Frames per second where a frame rate is meant.
		{in: "148809fps", kinds: []Kind{Frames}, want: Rate{Frames, 148809}},
		{in: "148.8kpps", kinds: []Kind{Frames}, want: Rate{Frames, 148800}},
		{in: "1.488Mpps", kinds: []Kind{Frames}, want: Rate{Frames, 1.488e6}},
		{in: "2mfps", kinds: []Kind{Frames}, want: Rate{Frames, 2e6}},
		{in: "100", kinds: []Kind{Frames}, want: Rate{Frames, 100}},
		{in: "14k", kinds: []Kind{Frames}, want: Rate{Frames, 14e3}},
		// Loads in percent where a load is meant.
		{in: "90%", kinds: []Kind{Percent, Bits}, want: Rate{Percent, 90}},
		{in: "90", kinds: []Kind{Percent, Bits}, want: Rate{Percent, 90}},
		{in: "900M", kinds: []Kind{Percent, Bits}, want: Rate{Bits, 900e6}},
		{in: "0.5%", kinds: []Kind{Percent}, want: Rate{Percent, 0.5}},

		// Byte rates are refused, naming both readings.
		{in: "50mbps", wantErr: []string{"50mbps is ambiguous", "tc reads it as bytes per second (400 Mbit/s)", "bits per second (50 Mbit/s)", "50Mbit/s", "400Mbit/s"}},
		{in: "50Mbps", wantErr: []string{"tc reads it as bytes per second (400 Mbit/s)", "(50 Mbit/s)"}},
		{in: "50MBps", wantErr: []string{"(400 Mbit/s)", "(50 Mbit/s)"}},
		{in: "50MB/s", wantErr: []string{"(400 Mbit/s)", "(50 Mbit/s)"}},
		{in: "800kbps", wantErr: []string{"(6.4 Mbit/s)", "(800 kbit/s)", "800kbit/s"}},
		{in: "1gbps", wantErr: []string{"(8 Gbit/s)", "(1 Gbit/s)"}},
		{in: "125000000Bps", wantErr: []string{"(1 Gbit/s)", "(125 Mbit/s)"}},
		{in: "10Mbyte/s", wantErr: []string{"(80 Mbit/s)"}},
		{in: "1GB", wantErr: []string{"(8 Gbit/s)"}},

		// Other mistakes.
		{in: "fast", wantErr: []string{"not a bit rate", "10G"}},
		{in: "", wantErr: []string{"not a bit rate"}},
		{in: "10X", wantErr: []string{`unit "X" unknown`, "10G"}},
		{in: "50mbt", wantErr: []string{`unit "mbt" unknown`}},
		{in: "0", wantErr: []string{"positive bit rate"}},
		{in: "-5mbit", wantErr: []string{"positive bit rate"}},
		{in: "10", wantErr: []string{"below 1 kbit/s", "did you mean 10M or 10G?"}},
		{in: "10bit", wantErr: []string{"below 1 kbit/s", "100M"}},
		{in: "100T", wantErr: []string{"above 10 Tbit/s", "100G"}},
		{in: "NaN", wantErr: []string{"not a bit rate"}},
		{in: "Inf", wantErr: []string{"not a bit rate"}},
		{in: "1e400", wantErr: []string{"not a bit rate"}},
		{in: "100kpps", wantErr: []string{"100kpps is a frame rate; a bit rate is wanted here"}},
		{in: "90%", wantErr: []string{"90% is a load in percent of the line rate; a bit rate is wanted here"}},
		{in: "9k", kinds: []Kind{Percent}, wantErr: []string{"above 100%"}},
		{in: "1Gbit", kinds: []Kind{Frames}, wantErr: []string{"a frame rate is wanted"}},
		{in: "20Gpps", kinds: []Kind{Frames}, wantErr: []string{"above 10 Tbit/s of 64-byte frames"}},
		{in: "120%", kinds: []Kind{Percent}, wantErr: []string{"above 100%"}},
		{in: "0%", kinds: []Kind{Percent}, wantErr: []string{"positive load"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in, tt.kinds...)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Parse(%q) = %+v, want an error", tt.in, got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Parse(%q) error %q does not contain %q", tt.in, err, w)
					}
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Parse(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestByteRateIsErrBytes: callers can tell the byte-rate refusal apart.
func TestByteRateIsErrBytes(t *testing.T) {
	for _, s := range []string{"50mbps", "50MBps", "1kbps"} {
		if _, err := ParseBits(s); !errors.Is(err, ErrBytes) {
			t.Errorf("ParseBits(%q) = %v, want ErrBytes", s, err)
		}
	}
	if _, err := ParseBits("50mbit"); err != nil {
		t.Errorf("50mbit: %v", err)
	}
}

// TestFormatRoundTrip: what Format writes, Parse reads back.
func TestFormatRoundTrip(t *testing.T) {
	for _, bps := range []float64{1e3, 64e3, 1.5e6, 50e6, 999e6, 1e9, 2.5e9, 10e9, 400e9, 1e12, 10e12} {
		s := Format(bps)
		got, err := ParseBits(s)
		if err != nil || got != bps {
			t.Errorf("ParseBits(Format(%g) = %q) = %g, %v", bps, s, got, err)
		}
	}
}

func TestFrames(t *testing.T) {
	if got, err := ParseFrames("1.488Mpps"); err != nil || got != 1.488e6 {
		t.Errorf("ParseFrames = %g, %v", got, err)
	}
}
