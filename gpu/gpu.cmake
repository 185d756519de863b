# Placeholder: finds nvcc and builds gpu/ (issue 6).
