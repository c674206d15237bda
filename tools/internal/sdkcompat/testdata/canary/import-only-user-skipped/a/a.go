package a

import (
	"fmt"
	"strings"
)

// Join is the only user of strings: without it the import would be
// unused and the file would not compile.
func Join(s []string) string { return strings.Join(s, ",") }

// Print uses fmt, as Format does.
func Print(v any) { fmt.Println(v) }

// Format uses fmt too.
func Format(v any) string { return fmt.Sprint(v) }
