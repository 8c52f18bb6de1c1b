{
  description = "lazy-memory: the shared memory store of the lazy agent orchestrator";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
      forAllSystems = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});

      # buildPythonApplication with pyproject = true builds the same wheel `pip install .` does,
      # from pyproject.toml, with nixpkgs' own Python packages as its dependencies.
      lazyMemory = pkgs:
        let python = pkgs.python312;
        in python.pkgs.buildPythonApplication {
          pname = "lazy-memory";
          version = "0.1.0";
          pyproject = true;
          src = self;
          build-system = [ python.pkgs.setuptools ];
          dependencies = with python.pkgs; [
            anthropic
            asyncpg
            pydantic
            pygls
            pyyaml
          ];
          # The test suite starts PostgreSQL, mounts a tmpfs and spawns daemons: it runs in
          # CI and in the dev shell, not in the sandboxed build.
          doCheck = false;
          pythonImportsCheck = [ "lazy_memory.engine.service" "lazy_memory.rpc.cli" ];
          meta = {
            description = "The shared memory store of the lazy agent orchestrator";
            mainProgram = "lazy";
          };
        };
    in {
      packages = forAllSystems (pkgs: { default = lazyMemory pkgs; });

      apps = forAllSystems (pkgs: {
        default = {
          type = "app";
          program = "${lazyMemory pkgs}/bin/lazy";
        };
      });

      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          inputsFrom = [ (lazyMemory pkgs) ];
          packages = [
            (pkgs.python312.withPackages (ps: with ps; [
              cryptography
              hypothesis
              mcp
              mypy
              pytest
              pytest-asyncio
              types-pyyaml
            ]))
            pkgs.postgresql
            pkgs.ruff
          ];
        };
      });
    };
}
