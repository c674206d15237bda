// Package server serves the contract's API.
package server

import (
	"fmt"

	"example.test/contracts/api"
)

// Describe names the group served.
func Describe() string { return fmt.Sprint("serving ", api.Group) }
