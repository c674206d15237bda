package backup_test

import (
	"testing"

	"example.test/platform/server"
)

func TestServer(t *testing.T) { _ = server.Describe() }
