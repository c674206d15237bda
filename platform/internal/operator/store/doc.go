// Package store is cozystack-operator's cache of verified catalog
// artifacts: an OCI image-layout directory (--storage-dir) holding, for each
// PackageSource, the revision it serves (its last good one), tagged
// names.StoreTag(source). The artifact server reads chart archives from it
// by digest; after a restart the served revisions are still there, so a
// registry that is down never takes a served chart away: a failed pull
// keeps the last good revision serving (docs/operator/catalogs.md, "Catalog delivery",
// "Last good revision").
//
// Nothing enters the store unverified: Pull stores an artifact only after
// cozystack.io/contracts/artifact.Pull has checked every digest, size,
// media type and chart archive, so nothing is ever cached under a digest
// whose bytes did not match it. artifact.Pull streams each chart into a
// staging file in the directory "staging" of the layout (StagingDir: the
// same file system, ignored by oras-go's index and garbage collection,
// which only read index.json and blobs/; emptied by Open of what a killed
// process left) and stores it once the whole artifact is verified, so
// the operator's memory does not grow with the size of the charts.
//
// The Store also keeps, in memory, the metadata of every verified
// artifact it holds (the *artifact.Artifact, not the charts), filled by
// Pull and by the first Load of a revision after a restart, which
// verifies it once; later Loads only check that its blobs are still on
// disk. The garbage collection of Serve, Discard and Forget drops the
// entries of the manifests it removes.
package store
