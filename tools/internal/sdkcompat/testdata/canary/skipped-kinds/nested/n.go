package nested

// Nested is in another module.
func Nested() {}
