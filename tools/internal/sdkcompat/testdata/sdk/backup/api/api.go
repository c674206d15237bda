// Package api is the tiny SDK of the integration test.
package api

// Plan is a type.
type Plan struct {
	Name string
}

// NewPlan returns a Plan named name.
func NewPlan(name string) Plan { return Plan{Name: name} }

// Rename is a method.
func (p *Plan) Rename(name string) { p.Name = name }
