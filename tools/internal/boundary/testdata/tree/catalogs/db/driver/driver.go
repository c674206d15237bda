// Package driver is the database backup driver.
package driver

import "example.test/contracts/api"

// Group is the group the driver registers for.
var Group = api.Group
