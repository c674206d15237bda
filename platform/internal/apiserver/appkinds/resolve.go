package appkinds

import (
	"fmt"
	"sort"
	"strings"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// Set is the outcome of Resolve: the served kinds by plural, and the
// failure of every AD that is not served, by AD name.
type Set struct {
	// ByPlural maps a resource (plural) name to its kind.
	ByPlural map[string]*Kind
	// Failures maps an AD name to why it is not served.
	Failures map[string]*Failure
}

// Served returns the served kinds in plural order.
func (s *Set) Served() []*Kind {
	out := make([]*Kind, 0, len(s.ByPlural))
	for _, k := range s.ByPlural {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Plural < out[j].Plural })
	return out
}

// ByDefinition returns the kind compiled from the named AD, or nil.
func (s *Set) ByDefinition(name string) *Kind {
	for _, k := range s.ByPlural {
		if k.Definition == name {
			return k
		}
	}
	return nil
}

// Fingerprint identifies the served set (each AD name, UID and generation),
// so callers can tell when discovery must change.
func (s *Set) Fingerprint() string {
	var parts []string
	for _, k := range s.Served() {
		parts = append(parts, fmt.Sprintf("%s/%s/%s/%d", k.Plural, k.Definition, k.UID, k.Generation))
	}
	return strings.Join(parts, ",")
}

// Resolve compiles every AD and settles contested names. A name (plural,
// singular, kind or short name) is contested when two valid ADs claim it.
// The AD already serving it (Kind.Incumbent, from its status) keeps it;
// otherwise the AD created first (ties broken by AD name). The outcome never
// depends on the order ADs are seen in. The losers get PluralConflict or
// KindConflict naming the winner.
func Resolve(ads []*v1alpha1.ApplicationDefinition) *Set {
	set := &Set{ByPlural: map[string]*Kind{}, Failures: map[string]*Failure{}}
	var compiled []*Kind
	for _, ad := range ads {
		k, f := Compile(ad)
		if f != nil {
			set.Failures[ad.Name] = f
			continue
		}
		compiled = append(compiled, k)
	}
	sort.Slice(compiled, func(i, j int) bool {
		a, b := compiled[i], compiled[j]
		if a.Incumbent != b.Incumbent {
			return a.Incumbent
		}
		if !a.Created.Equal(&b.Created) {
			return a.Created.Before(&b.Created)
		}
		return a.Definition < b.Definition
	})
	// claims maps every resource-ish name (plural, singular, short names)
	// and every kind to the AD that holds it.
	resourceNames := map[string]*Kind{}
	kindNames := map[string]*Kind{}
	for _, k := range compiled {
		if f := conflict(k, resourceNames, kindNames); f != nil {
			set.Failures[k.Definition] = f
			continue
		}
		for _, n := range append([]string{k.Plural, k.Singular}, k.ShortNames...) {
			resourceNames[n] = k
		}
		kindNames[strings.ToLower(k.Kind)] = k
		set.ByPlural[k.Plural] = k
	}
	return set
}

func conflict(k *Kind, resourceNames, kindNames map[string]*Kind) *Failure {
	if w, ok := resourceNames[k.Plural]; ok {
		return &Failure{Reason: v1alpha1.ReasonPluralConflict, Message: fmt.Sprintf(
			"plural %q is already served by ApplicationDefinition %q; choose another spec.application.plural or delete one of the two",
			k.Plural, w.Definition)}
	}
	for _, n := range append([]string{k.Singular}, k.ShortNames...) {
		if w, ok := resourceNames[n]; ok {
			return &Failure{Reason: v1alpha1.ReasonPluralConflict, Message: fmt.Sprintf(
				"resource name %q (singular or short name) is already used by ApplicationDefinition %q; choose another name",
				n, w.Definition)}
		}
	}
	if w, ok := kindNames[strings.ToLower(k.Kind)]; ok {
		return &Failure{Reason: v1alpha1.ReasonKindConflict, Message: fmt.Sprintf(
			"kind %q is already served by ApplicationDefinition %q; choose another spec.application.kind or delete one of the two",
			k.Kind, w.Definition)}
	}
	return nil
}
