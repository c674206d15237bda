package beta

// Beta is in a later directory.
func Beta() {}
