package sdkcompat

import (
	"reflect"
	"testing"
)

func TestParseAPIReport(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []APIChange
		err        bool
	}{
		{name: "empty", text: ""},
		{name: "both sections", text: "Incompatible changes:\n- ./a.F: removed\n- package m/b: removed\nCompatible changes:\n- ./a.G: added\n",
			want: []APIChange{{"./a.F: removed", false}, {"package m/b: removed", false}, {"./a.G: added", true}}},
		{name: "compatible only", text: "Compatible changes:\n- package m/c: added\n", want: []APIChange{{"package m/c: added", true}}},
		{name: "continued line", text: "Incompatible changes:\n- ./a.T: changed from struct{\nA int} to int\n",
			want: []APIChange{{"./a.T: changed from struct{\nA int} to int", false}}},
		{name: "unknown format", text: "something else\n", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAPIReport(tc.text)
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want error: %v", err, tc.err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestVersionRules(t *testing.T) {
	v := func(s string) Version {
		t.Helper()
		x, err := ParseVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, tc := range []struct {
		next, base      string
		minor, breaking bool
	}{
		{"0.1.1", "0.1.0", false, false},
		{"0.2.0", "0.1.0", true, true},
		{"1.0.0", "0.1.0", true, true},
		{"1.3.0", "1.2.3", true, false},
		{"2.0.0", "1.2.3", true, true},
		{"1.2.3", "1.2.3", false, false},
	} {
		if got := v(tc.next).MinorBumpOf(v(tc.base)); got != tc.minor {
			t.Errorf("%s.MinorBumpOf(%s) = %v", tc.next, tc.base, got)
		}
		if got := v(tc.next).BreakingBumpOf(v(tc.base)); got != tc.breaking {
			t.Errorf("%s.BreakingBumpOf(%s) = %v", tc.next, tc.base, got)
		}
	}
	for _, bad := range []string{"", "1.2", "01.2.3", "1.2.3-rc.1", "x"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q): no error", bad)
		}
	}
	if got := v("0.3.1").NextBreaking().String(); got != "0.4.0" {
		t.Errorf("0.3.1.NextBreaking() = %s", got)
	}
	if got := v("1.3.1").NextBreaking().String(); got != "2.0.0" {
		t.Errorf("1.3.1.NextBreaking() = %s", got)
	}
}
