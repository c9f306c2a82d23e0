package reports

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoldenCharts(t *testing.T) {
	res := loadFixture(t, fixture1500)
	for _, kind := range Charts {
		t.Run(string(kind), func(t *testing.T) {
			var svg bytes.Buffer
			if err := WriteChart(&svg, res, kind, SVG); err != nil {
				t.Fatal(err)
			}
			golden(t, "mtu1500_"+string(kind)+".svg", svg.Bytes())

			var b bytes.Buffer
			if err := WriteChart(&b, res, kind, PNG); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b.Bytes()))
			if err != nil {
				t.Fatalf("PNG does not decode: %v", err)
			}
			if got := img.Bounds().Size(); got.X != 768 || got.Y != 480 {
				t.Errorf("PNG is %v pixels, want 768x480", got)
			}
			if dir := os.Getenv("REPORTS_CHART_DIR"); dir != "" {
				os.WriteFile(filepath.Join(dir, string(kind)+".png"), b.Bytes(), 0o644)
			}
			_ = strings.Contains
		})
	}
}
