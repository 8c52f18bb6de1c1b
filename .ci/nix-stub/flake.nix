# A stand-in for nixpkgs, for checking flake.nix offline (.ci/flake-check.sh):
#   nix flake check --no-build --no-write-lock-file --override-input nixpkgs path:.ci/nix-stub
# It defines only what flake.nix uses, under nixpkgs' own names, so every output evaluates for
# every system and a misspelt attribute, package or argument fails. Each stand-in derivation
# names its inputs, which forces every element of every list. Using something new from
# nixpkgs in flake.nix means adding it here, spelt exactly as nixpkgs spells it.
{
  description = "A stand-in for the parts of nixpkgs lazy-memory's flake uses";

  outputs = { self }:
    let
      genAttrs = names: f: builtins.listToAttrs (map (name: { inherit name; value = f name; }) names);

      # Arguments a function accepts: anything else is a misspelling (nixpkgs would pass it on
      # to the builder unnoticed), and the required ones must be there.
      takes = what: allowed: required: args:
        let
          unknown = builtins.filter (name: !builtins.elem name allowed) (builtins.attrNames args);
          missing = builtins.filter (name: !builtins.hasAttr name args) required;
        in
        if unknown != [ ] then throw "${what}: unknown argument(s) ${toString unknown}"
        else if missing != [ ] then throw "${what}: missing argument(s) ${toString missing}"
        else args;

      pkgsFor = system:
        let
          drv = name: inputs: derivation {
            inherit name system inputs;
            builder = "/bin/sh";
            args = [ "-c" "echo > $out" ];
          };
          pythonPackages = genAttrs [
            # what the package needs to build and run
            "setuptools"
            "anthropic"
            "asyncpg"
            "pydantic"
            "pygls"
            "pyyaml"
            # the dev shell's test tools
            "cryptography"
            "hypothesis"
            "mcp"
            "mypy"
            "pytest"
            "pytest-asyncio"
            "types-pyyaml"
          ] (name: drv "python3.12-${name}" [ ]) // {
            buildPythonApplication = args:
              let
                a = takes "buildPythonApplication"
                  [ "pname" "version" "pyproject" "src" "build-system" "dependencies" "doCheck"
                    "pythonImportsCheck" "meta" ]
                  [ "pname" "version" "src" ]
                  args;
                checked =
                  assert builtins.isBool (a.pyproject or false);
                  assert builtins.isList (a.dependencies or [ ]);
                  assert builtins.isList (a.pythonImportsCheck or [ ]);
                  takes "meta" [ "description" "mainProgram" "license" "homepage" ] [ ] (a.meta or { });
              in
              builtins.seq checked (drv "${a.pname}-${a.version}"
                ((a.build-system or [ ]) ++ (a.dependencies or [ ]) ++ [ (toString a.src) ])
                // { meta = checked; });
          };
          python312 = drv "python3-3.12" [ ] // {
            pkgs = pythonPackages;
            withPackages = choose: drv "python3-3.12-env" (choose pythonPackages);
          };
        in
        {
          inherit python312;
          postgresql = drv "postgresql" [ ];
          ruff = drv "ruff" [ ];
          mkShell = args:
            let a = takes "mkShell" [ "inputsFrom" "packages" "shellHook" ] [ ] args;
            in drv "nix-shell" ((a.inputsFrom or [ ]) ++ (a.packages or [ ]));
        };
    in
    {
      lib = { inherit genAttrs; };
      legacyPackages = genAttrs [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ] pkgsFor;
    };
}
