module example.test/catalogs/vm

go 1.26.0
