package rfc2544

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/rfc2544/rfc2544/framing"
	"go.yaml.in/yaml/v3"
)

// A frame-size mix (IMIX) is one more entry of Plan.FrameSizes, a negative
// code (framing.SizeIMIX); every procedure runs it like a frame size, its
// loads in frames/s of the mix and its line rate that of the mix's mean
// frame (framing.LineRateFPS). Plan files and the YAML of a plan write it
// by name ("imix").

// planSizes rewrites the mix names in the plan's frame_sizes ("imix", a
// name from the plan's mixes, or a mix written in place, mix:64x7,...) as
// their codes, so the plan decodes into Plan.FrameSizes; it registers the
// plan's mixes first (Plan.RegisterMixes). A name that is neither a number
// nor a mix is an error naming the line and the fix. In a flow list
// ([64, mix:64x7,570x4]) YAML splits a mix written in place at its commas:
// the parts are joined again.
func planSizes(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	var mp Plan
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value != "mixes" || v.Tag == "!!null" {
			continue
		}
		if err := checkNode(v, reflect.TypeOf(mp.Mixes), "mixes"); err != nil {
			return err
		}
		if err := v.Decode(&mp.Mixes); err != nil {
			return fmt.Errorf("line %d: mixes: %v", v.Line, cleanYAMLError(err))
		}
		if err := mp.RegisterMixes(); err != nil {
			return fmt.Errorf("line %d: %w", v.Line, err)
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value != "frame_sizes" || v.Kind != yaml.SequenceNode {
			continue
		}
		joinInlineMixes(v)
		for j, e := range v.Content {
			if e.Kind != yaml.ScalarNode || e.ShortTag() != "!!str" {
				continue // numbers: checked by Plan.Validate
			}
			code, err := mp.parseSizes(e.Value)
			if err == nil && len(code) != 1 {
				err = fmt.Errorf("%s: one size per item", quote(e.Value))
			}
			if err != nil {
				return fmt.Errorf("line %d: frame_sizes[%d]: %v", e.Line, j, err)
			}
			e.Value, e.Tag, e.Style = strconv.Itoa(code[0]), "!!int", 0
		}
	}
	return nil
}

// joinInlineMixes joins the items of a frame_sizes list that YAML split off
// a mix written in place: string items of the form SIZExWEIGHT after one
// starting "mix:".
func joinInlineMixes(v *yaml.Node) {
	var out []*yaml.Node
	var mix *yaml.Node
	for _, e := range v.Content {
		str := e.Kind == yaml.ScalarNode && e.ShortTag() == "!!str"
		if mix != nil && str && isMixPart(e.Value) {
			mix.Value += "," + strings.TrimSpace(e.Value)
			continue
		}
		mix = nil
		if str && strings.HasPrefix(strings.ToLower(strings.TrimSpace(e.Value)), framing.InlineMixPrefix) {
			mix = e
		}
		out = append(out, e)
	}
	v.Content = out
}

// nameSizes is planSizes' inverse for a plan encoded as a YAML document:
// the mix codes of frame_sizes are written by name.
func nameSizes(doc *yaml.Node) {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value != "frame_sizes" || v.Kind != yaml.SequenceNode {
			continue
		}
		for _, e := range v.Content {
			if c, err := strconv.Atoi(e.Value); err == nil && framing.IsMix(c) {
				e.Value, e.Tag, e.Style = framing.SizeName(c), "!!str", 0
			}
		}
	}
}
