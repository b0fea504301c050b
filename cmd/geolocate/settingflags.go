package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// A settingFlag is a CLI flag for one Choice setting of the table: its
// values, default and validation are the setting's, so the flag cannot
// accept what a deployment would refuse. On `geolocate local` it wins over
// the setting's variable in the shell, as -c wins over cdk.json.
type settingFlag struct {
	name    string
	setting *settings.Setting
	value   *string
}

// newSettingFlag registers --name for s; def is the flag's default ("" when
// the shell's variable, else the table's default, applies), help its
// description (the table's one line when empty) and note ends it.
func newSettingFlag(fs *flag.FlagSet, name string, s *settings.Setting, def, help, note string) settingFlag {
	if help == "" {
		help = s.Doc + ": " + strings.Join(s.Allowed, " or ")
	}
	return settingFlag{name: name, setting: s, value: fs.String(name, def, help+note)}
}

// check is the flag's value in the table's spelling, "" when unset and
// optional (the shell's variable then applies).
func (f settingFlag) check(optional bool) (string, error) {
	v := strings.TrimSpace(*f.value)
	if v == "" && optional {
		return "", nil
	}
	for _, a := range f.setting.Allowed {
		if strings.EqualFold(a, v) {
			return a, nil
		}
	}
	allowed := f.setting.Allowed
	if len(allowed) == 2 {
		return "", usageError{fmt.Errorf("--%s %q is neither %s nor %s", f.name, *f.value, allowed[0], allowed[1])}
	}
	return "", usageError{errors.New(fmt.Sprintf("--%s %q is not one of %s", f.name, *f.value, strings.Join(allowed, ", ")))}
}
