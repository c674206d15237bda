package server

import (
	"strings"
)

var _ = strings.ToUpper
