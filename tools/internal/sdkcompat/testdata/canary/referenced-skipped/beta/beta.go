package beta

import "example.com/sdk/alpha"

// Beta calls alpha.Used.
func Beta() int { return alpha.Used() }
