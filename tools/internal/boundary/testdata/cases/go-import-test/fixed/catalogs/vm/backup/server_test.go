package backup_test

import (
	"testing"

	"example.test/catalogs/vm/backup"
)

func TestServer(t *testing.T) { _ = backup.Group }
