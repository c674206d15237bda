package a

// Only is called by Other's package var.
func Only() int { return 1 }

var x = Only()
