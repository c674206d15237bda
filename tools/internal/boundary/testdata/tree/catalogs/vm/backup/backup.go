// Package backup is the VM backup driver.
package backup

import "example.test/contracts/api"

// Group is the group the driver registers for.
var Group = api.Group
