module cozystack.io/catalogs/virtualization

go 1.26.0
