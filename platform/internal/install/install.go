package install

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/crds"
	"cozystack.io/platform/backupaccess"
	backupcrds "cozystack.io/sdk/backup/crds"
	"cozystack.io/sdk/localcp"
)

// CRDs applies the embedded CRDs of cozystack.io/contracts and of
// backups.cozystack.io (cozystack.io/sdk/backup/crds), the admission
// policies on backup driver registrations (platform/backupaccess) and,
// when namespace is not empty, creates it (an existing one is fine).
func CRDs(ctx context.Context, cfg *rest.Config, namespace string) error {
	list, err := crds.All()
	if err != nil {
		return err
	}
	backups, err := backupcrds.All()
	if err != nil {
		return err
	}
	list = append(list, backups...)
	if err := localcp.ApplyCRDs(ctx, cfg, list...); err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	direct, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	if err := backupaccess.Apply(ctx, direct); err != nil {
		return fmt.Errorf("install the backup driver policies: %w", err)
	}
	if namespace == "" {
		return nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	return nil
}
