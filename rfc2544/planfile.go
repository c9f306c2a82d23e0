package rfc2544

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rfc2544/rfc2544/internal/fileio"
	"github.com/rfc2544/rfc2544/internal/rate"
)

// MaxPlanBytes bounds a plan file: real plans are a few kilobytes.
const MaxPlanBytes = 1 << 20

// LoadPlan reads the YAML plan file at path (a regular file of at most
// MaxPlanBytes) on top of base, as ParsePlan does. A file that cannot be
// read gives an error wrapping the os error (os.ErrNotExist and the like).
func LoadPlan(path string, base Plan) (p Plan, given map[string]bool, err error) {
	b, err := fileio.ReadBounded(path, MaxPlanBytes)
	if err != nil {
		return base, nil, fmt.Errorf("%s: %w", path, err)
	}
	return ParsePlan(path, b, base)
}

// LoadPlanProfile returns the profile the plan file at path names
// ("profile: quick"), or "" when it names none.
func LoadPlanProfile(path string) (string, error) {
	b, err := fileio.ReadBounded(path, MaxPlanBytes)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	var v struct {
		Profile string `yaml:"profile"`
	}
	if err := yaml.Unmarshal(b, &v); err != nil {
		return "", fmt.Errorf("%s: not valid YAML: %v", path, cleanYAMLError(err))
	}
	return v.Profile, nil
}

// ParsePlan decodes the YAML plan b, named name in errors, on top of base
// (usually a profile's plan): the fields b sets replace base's, a field set
// to null keeps base's value, and the rest stay. Decoding is strict: an
// unknown field (with a suggestion when one is close), a value of the wrong
// kind or a second YAML document is an error "name line N: ..." naming the
// field and the fix. An empty b returns base.
//
// given holds the dotted names of the fields b sets (even to zero or null),
// e.g. "link_bps" and "trial.duration".
func ParsePlan(name string, b []byte, base Plan) (p Plan, given map[string]bool, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return base, nil, fmt.Errorf("%s: not valid YAML: %v", name, cleanYAMLError(err))
	}
	// One document: a second one (after ---) would otherwise be ignored.
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var first, second yaml.Node
	if err := dec.Decode(&first); err == nil {
		if err := dec.Decode(&second); !errors.Is(err, io.EOF) {
			line := second.Line
			if err != nil {
				return base, nil, fmt.Errorf("%s: a plan file is one YAML document, and what follows the first is not valid YAML: %v", name, cleanYAMLError(err))
			}
			return base, nil, fmt.Errorf("%s: a second YAML document at line %d; a plan file is one document: remove the '---' and what follows, or merge it into the first", name, line)
		}
	}
	if len(doc.Content) == 0 {
		return base, nil, nil // an empty plan changes nothing
	}
	if err := planRates(doc.Content[0]); err != nil {
		return base, nil, fmt.Errorf("%s %w", name, err)
	}
	if err := planSizes(doc.Content[0]); err != nil {
		return base, nil, fmt.Errorf("%s %w", name, err)
	}
	if err := checkNode(doc.Content[0], reflect.TypeOf(base), ""); err != nil {
		return base, nil, fmt.Errorf("%s %w", name, err)
	}
	// A null field leaves base's value (decoding it would zero the
	// field); checkNode has refused unknown fields.
	dropNulls(doc.Content[0])
	p = base
	if err := doc.Content[0].Decode(&p); err != nil {
		return base, nil, fmt.Errorf("%s: %v", name, cleanYAMLError(err))
	}
	given = map[string]bool{}
	givenFields(doc.Content[0], "", given)
	// Mixes written in place among the sizes join the plan's mixes.
	return p.defineMixes(), given, nil
}

// planRateFields are the plan's bit-rate fields: they read the rate
// grammar of the flags (internal/rate), e.g. link_bps: 10G.
var planRateFields = []string{"link_bps"}

// planRates rewrites the plan's bit-rate fields written with a unit ("10G",
// "2.5Gbit/s") as numbers of bit/s; a byte spelling such as 50mbps is an
// error naming both readings.
func planRates(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(planRateFields, k.Value) || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			continue
		}
		if v.ShortTag() != "!!str" {
			continue // a YAML number of bit/s: Plan.Validate checks it as the flag's
		}
		bps, err := rate.ParseBits(v.Value)
		if err != nil {
			return fmt.Errorf("line %d: %s %q: %w", v.Line, k.Value, v.Value, err)
		}
		v.Value, v.Tag, v.Style = strconv.FormatFloat(bps, 'g', -1, 64), "!!float", 0
	}
	return nil
}

// YAML renders p as YAML, the form ParsePlan reads.
func (p Plan) YAML() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	var doc yaml.Node
	if err := doc.Encode(p); err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	nameSizes(&doc)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	return buf.Bytes(), nil
}

// dropNulls removes the fields set to null from a mapping node, at every
// depth.
func dropNulls(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return
	}
	kept := n.Content[:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			continue
		}
		dropNulls(v)
		kept = append(kept, k, v)
	}
	n.Content = kept
}

// givenFields adds the dotted names of the fields a mapping node sets.
func givenFields(n *yaml.Node, path string, given map[string]bool) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := joinField(path, n.Content[i].Value)
		given[name] = true
		givenFields(n.Content[i+1], name, given)
	}
}

func cleanYAMLError(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	s = strings.ReplaceAll(s, "unmarshal errors:\n  ", "")
	return strings.ReplaceAll(s, "\n  ", "; ")
}

var textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()

// checkNode checks a YAML node against the Go type t that it will decode
// into; path is the dotted field path so far. The error starts with "line N:".
func checkNode(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	field := path
	if field == "" {
		field = "the plan"
	}
	if n.Tag == "!!null" {
		return nil // leaves the profile's value
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: %s: want a single value, got a %s", n.Line, field, kindName(n))
		}
		v := reflect.New(t).Interface().(encoding.TextUnmarshaler)
		if err := v.UnmarshalText([]byte(n.Value)); err != nil {
			return fmt.Errorf("line %d: %s: %w", n.Line, field, err)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: %s: want a mapping of fields (%s), got a %s", n.Line, field, strings.Join(yamlFields(t), ", "), kindName(n))
		}
		fields := yamlFieldTypes(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				where := ""
				if path != "" {
					where = " in " + path
				}
				hint := ""
				if s := closest(k.Value, yamlFields(t)); s != "" {
					hint = fmt.Sprintf("did you mean %q? ", s)
				}
				return fmt.Errorf("line %d: unknown field %s%s; %sknown fields: %s", k.Line, quote(k.Value), where, hint, strings.Join(yamlFields(t), ", "))
			}
			if err := checkNode(v, ft, joinField(path, k.Value)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("line %d: %s: want a list, e.g. [%s], got a %s", n.Line, field, exampleList(path, t.Elem()), kindName(n))
		}
		for i, e := range n.Content {
			if err := checkNode(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: %s: want a single value, got a %s", n.Line, field, kindName(n))
	}
	var err error
	switch t.Kind() {
	case reflect.Bool:
		var b bool
		err = n.Decode(&b)
		if err != nil {
			return fmt.Errorf("line %d: %s: %s is not true or false", n.Line, field, quote(n.Value))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var i int64
		if err = n.Decode(&i); err != nil {
			return fmt.Errorf("line %d: %s: %s is not a whole number, e.g. 20", n.Line, field, quote(n.Value))
		}
	case reflect.Float32, reflect.Float64:
		var f float64
		if err = n.Decode(&f); err != nil {
			return fmt.Errorf("line %d: %s: %s is not a number, e.g. 0.5", n.Line, field, quote(n.Value))
		}
	case reflect.String:
		if n.Tag != "!!str" && n.Tag != "" {
			// Numbers and bools decode into strings too; names never are.
			if _, err := strconv.ParseFloat(n.Value, 64); err == nil && t.Name() != "string" {
				return fmt.Errorf("line %d: %s: %s is a number, want a name", n.Line, field, quote(n.Value))
			}
		}
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "value " + quote(n.Value)
	}
	return "node"
}

func exampleList(path string, t reflect.Type) string {
	if path == "lab_sweep.fw_rules" {
		return "0, 100, 1000, 10000"
	}
	if t.Kind() == reflect.Int {
		return "64, 512, 1518"
	}
	if t == reflect.TypeOf(Test("")) {
		return "throughput, latency"
	}
	return "..."
}

func joinField(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// yamlFieldTypes maps a struct's YAML field names to their types.
func yamlFieldTypes(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, f := range yamlStructFields(t) {
		m[f.name] = f.typ
	}
	return m
}

// yamlFields lists a struct's YAML field names in declaration order.
func yamlFields(t reflect.Type) []string {
	var names []string
	for _, f := range yamlStructFields(t) {
		names = append(names, f.name)
	}
	return names
}

type yamlField struct {
	name string
	typ  reflect.Type
}

// yamlStructFields lists a struct's exported fields under their YAML names
// (the tag's name, else the lower-cased Go name; "-" skipped), in order.
func yamlStructFields(t reflect.Type) []yamlField {
	var fs []yamlField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fs = append(fs, yamlField{name, f.Type})
	}
	return fs
}

// closest returns the candidate within edit distance 2 of s, if any.
func closest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
