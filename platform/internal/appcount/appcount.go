package appcount

import (
	"fmt"
	"sort"
	"strings"
)

// MaxNamed is how many namespaces Describe names before "and N more".
const MaxNamed = 10

// Describe says how many applications byNamespace (a count per namespace)
// holds and where: "3 applications in 2 namespaces (tenant-a: 2,
// tenant-b: 1)", namespaces in name order, at most MaxNamed named.
func Describe(byNamespace map[string]int) string {
	total := 0
	namespaces := make([]string, 0, len(byNamespace))
	for ns, n := range byNamespace {
		total += n
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	var named []string
	for i, ns := range namespaces {
		if i == MaxNamed {
			named = append(named, fmt.Sprintf("and %d more", len(namespaces)-i))
			break
		}
		named = append(named, fmt.Sprintf("%s: %d", ns, byNamespace[ns]))
	}
	apps, nss := "applications", "namespaces"
	if total == 1 {
		apps = "application"
	}
	if len(namespaces) == 1 {
		nss = "namespace"
	}
	return fmt.Sprintf("%d %s in %d %s (%s)", total, apps, len(namespaces), nss, strings.Join(named, ", "))
}
