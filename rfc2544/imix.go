package rfc2544

import (
	"fmt"
	"strconv"

	"github.com/rfc2544/rfc2544/framing"
	"go.yaml.in/yaml/v3"
)

// A frame-size mix (IMIX) is one more entry of Plan.FrameSizes, a negative
// code (framing.SizeIMIX); every procedure runs it like a frame size, its
// loads in frames/s of the mix and its line rate that of the mix's mean
// frame (framing.LineRateFPS). Plan files and the YAML of a plan write it
// by name ("imix").

// planSizes rewrites the mix names in the plan's frame_sizes ("imix") as
// their codes, so the plan decodes into Plan.FrameSizes; a name that is
// neither a number nor a mix is an error naming the line and the fix.
func planSizes(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value != "frame_sizes" || v.Kind != yaml.SequenceNode {
			continue
		}
		for j, e := range v.Content {
			if e.Kind != yaml.ScalarNode || e.ShortTag() != "!!str" {
				continue // numbers: checked by Plan.Validate
			}
			code, err := framing.ParseSize(e.Value)
			if err != nil {
				return fmt.Errorf("line %d: frame_sizes[%d]: %v; write sizes like [64, imix, 1518]", e.Line, j, err)
			}
			e.Value, e.Tag, e.Style = strconv.Itoa(code), "!!int", 0
		}
	}
	return nil
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
