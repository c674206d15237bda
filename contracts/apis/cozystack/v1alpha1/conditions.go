package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GetConditions and SetConditions give the platform's reconcilers (and any
// client using fluxcd/pkg/runtime's conditions package, whose Getter and
// Setter these satisfy) one way to read and write status.conditions.

// GetConditions returns the status conditions of the PackageSource.
func (in *PackageSource) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions of the PackageSource.
func (in *PackageSource) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// GetConditions returns the status conditions of the Package.
func (in *Package) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions of the Package.
func (in *Package) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// GetConditions returns the status conditions of the ClusterValues.
func (in *ClusterValues) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions of the ClusterValues.
func (in *ClusterValues) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// GetConditions returns the status conditions of the ApplicationDefinition.
func (in *ApplicationDefinition) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions of the ApplicationDefinition.
func (in *ApplicationDefinition) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }
