package reports

import (
	"bytes"
	"testing"
)

func TestGoldenTables(t *testing.T) {
	res := loadFixture(t, fixture1500)
	var b bytes.Buffer
	if err := WriteTables(&b, res); err != nil {
		t.Fatal(err)
	}
	golden(t, "mtu1500.txt", b.Bytes())
}
