package driver

import (
	"example.test/contracts/api"
)

// Peer names the contract's group.
var Peer = api.Group
