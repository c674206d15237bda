package driver

import (
	"example.test/catalogs/vm/backup"
)

// Peer borrows the other catalog's group.
var Peer = backup.Group
