package requirements

import (
	"errors"
	"strings"
	"testing"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

func TestCheck(t *testing.T) {
	info := func(min string, props ...string) v1alpha1.CatalogInfo {
		return v1alpha1.CatalogInfo{Name: "demo", Version: "1.0.0", MinPlatformVersion: min, RequiredProperties: props}
	}
	tests := []struct {
		name     string
		reason   string
		info     v1alpha1.CatalogInfo
		platform Platform
		// wantIn are substrings of the error; nil means no error.
		wantIn []string
	}{
		{
			name:     "equal version",
			reason:   "the platform version a catalog names is enough",
			info:     info("0.3.0"),
			platform: Platform{Version: "0.3.0"},
			wantIn:   nil,
		},
		{
			name:     "newer platform",
			reason:   "minPlatformVersion is a floor, not a pin",
			info:     info("0.3.0"),
			platform: Platform{Version: "1.0.0"},
			wantIn:   nil,
		},
		{
			name:     "older platform",
			reason:   "the refusal names the catalog, both versions and what is needed",
			info:     info("0.3.0"),
			platform: Platform{Version: "0.2.9"},
			wantIn:   []string{"catalog demo 1.0.0 needs platform version 0.3.0 or newer, this platform is 0.2.9"},
		},
		{
			name:     "pre-release is older",
			reason:   "semver: a release candidate comes before its release",
			info:     info("0.3.0"),
			platform: Platform{Version: "0.3.0-rc.1"},
			wantIn:   []string{"0.3.0 or newer"},
		},
		{
			name:     "numeric, not lexical",
			reason:   "0.10.0 is newer than 0.9.0, though it sorts before it as text",
			info:     info("0.10.0"),
			platform: Platform{Version: "0.9.0"},
			wantIn:   []string{"0.10.0 or newer"},
		},
		{
			name:     "property present",
			reason:   "a K3 property the platform advertises, among others, is met",
			info:     info("0.1.0", "network.stableVMAddress"),
			platform: Platform{Version: "0.1.0", Properties: []string{"gpu", "network.stableVMAddress"}},
			wantIn:   nil,
		},
		{
			name:     "property missing",
			reason:   "the refusal names every missing property, what is advertised and the flag that sets it",
			info:     info("0.1.0", "network.stableVMAddress", "gpu"),
			platform: Platform{Version: "0.1.0", Properties: []string{"storage.replicated"}},
			wantIn:   []string{"needs the K3 properties gpu, network.stableVMAddress", "it advertises: storage.replicated", "--properties"},
		},
		{
			name:     "none advertised",
			reason:   "a platform advertising nothing says so instead of an empty list",
			info:     info("0.1.0", "gpu"),
			platform: Platform{Version: "0.1.0"},
			wantIn:   []string{"it advertises: none"},
		},
		{
			name:     "both unmet",
			reason:   "one refusal names the version and the properties together, so one fix is enough",
			info:     info("2.0.0", "gpu"),
			platform: Platform{Version: "1.0.0"},
			wantIn:   []string{"2.0.0 or newer", "K3 properties gpu"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.info, tt.platform)
			if tt.wantIn == nil {
				if err != nil {
					t.Fatalf("Check: %v, want nil (%s)", err, tt.reason)
				}
				return
			}
			var unmet *UnmetError
			if !errors.As(err, &unmet) {
				t.Fatalf("Check = %v, want *UnmetError (%s)", err, tt.reason)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestPlatformValidate(t *testing.T) {
	if err := (Platform{Version: "0.1.0"}).Validate(); err != nil {
		t.Errorf("0.1.0: %v", err)
	}
	for _, bad := range []string{"", "v0.1.0", "0.1", "latest"} {
		if err := (Platform{Version: bad}).Validate(); err == nil || !strings.Contains(err.Error(), "--platform-version") {
			t.Errorf("Validate(%q) = %v, want an error naming --platform-version", bad, err)
		}
	}
}
