package reports

import (
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// TestSchemaDocumented fails when a JSON field of the results file is not
// documented in SCHEMA.md: add a line there for every field you add.
func TestSchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[reflect.Type]bool{}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ == reflect.TypeOf(time.Time{}) || seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			// Documented as `name`, `parent.name` or `parent[].name`.
			re := regexp.MustCompile("[`.]" + regexp.QuoteMeta(name) + "`")
			if !re.Match(doc) {
				t.Errorf("results field %s.%s (json %q) is not documented in reports/SCHEMA.md", path, f.Name, name)
			}
			walk(path+"."+f.Name, f.Type)
		}
	}
	walk("Results", reflect.TypeOf(rfc2544.Results{}))
	if !strings.Contains(string(doc), "schema "+strconv.Itoa(rfc2544.SchemaVersion)) {
		t.Errorf("SCHEMA.md does not name schema %d", rfc2544.SchemaVersion)
	}
}
