package inner

// Inner is in an internal package.
func Inner() {}
