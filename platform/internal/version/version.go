package version

// Platform is the SemVer 2.0 version of this platform release (no leading
// "v"). It is the contract version of K1–K6 this build implements.
const Platform = "0.1.0"

// override is set by the linker for release builds; empty means Platform.
var override string

// Get returns the platform version: the linker override when set, else
// Platform.
func Get() string {
	if override != "" {
		return override
	}
	return Platform
}
