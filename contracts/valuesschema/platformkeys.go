package valuesschema

import "strings"

// IsPlatformKey reports whether key, a top-level key of an application's
// values, is the platform's: it begins with "_". The platform injects those
// values; they are never taken from a tenant's spec and never shown in it
// (contract K1, contracts/schemas/v1alpha1/k1-application.md).
func IsPlatformKey(key string) bool { return strings.HasPrefix(key, "_") }
