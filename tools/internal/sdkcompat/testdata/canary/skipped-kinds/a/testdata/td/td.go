package td

// InTestdata is in testdata.
func InTestdata() {}
