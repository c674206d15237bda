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
		info     v1alpha1.CatalogInfo
		platform Platform
		// wantIn are substrings of the error; nil means no error.
		wantIn []string
	}{
		{"equal version", info("0.3.0"), Platform{Version: "0.3.0"}, nil},
		{"newer platform", info("0.3.0"), Platform{Version: "1.0.0"}, nil},
		{"older platform", info("0.3.0"), Platform{Version: "0.2.9"},
			[]string{"catalog demo 1.0.0 needs platform version 0.3.0 or newer, this platform is 0.2.9"}},
		{"pre-release is older", info("0.3.0"), Platform{Version: "0.3.0-rc.1"}, []string{"0.3.0 or newer"}},
		{"numeric, not lexical", info("0.10.0"), Platform{Version: "0.9.0"}, []string{"0.10.0 or newer"}},
		{"property present", info("0.1.0", "network.stableVMAddress"),
			Platform{Version: "0.1.0", Properties: []string{"gpu", "network.stableVMAddress"}}, nil},
		{"property missing", info("0.1.0", "network.stableVMAddress", "gpu"),
			Platform{Version: "0.1.0", Properties: []string{"storage.replicated"}},
			[]string{"needs the K3 properties gpu, network.stableVMAddress", "it advertises: storage.replicated", "--properties"}},
		{"none advertised", info("0.1.0", "gpu"), Platform{Version: "0.1.0"}, []string{"it advertises: none"}},
		{"both unmet", info("2.0.0", "gpu"), Platform{Version: "1.0.0"}, []string{"2.0.0 or newer", "K3 properties gpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.info, tt.platform)
			if tt.wantIn == nil {
				if err != nil {
					t.Fatalf("Check: %v, want nil", err)
				}
				return
			}
			var unmet *UnmetError
			if !errors.As(err, &unmet) {
				t.Fatalf("Check = %v, want *UnmetError", err)
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
