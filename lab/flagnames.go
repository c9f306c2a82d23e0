package lab

import "flag"

// FlagNames are the names of the flags AddFlags registers, in name order:
// the settings of a lab a run creates for itself.
func FlagNames() []string {
	fs := flag.NewFlagSet("lab", flag.ContinueOnError)
	AddFlags(fs)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}
