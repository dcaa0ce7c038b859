# Installation: headers, libraries, the CLI, the plugin header and the CMake package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_qc_targets qconform_flags qconform_reference qconform_conformance)
set_target_properties(qconform_reference PROPERTIES EXPORT_NAME reference)
set_target_properties(qconform_conformance PROPERTIES EXPORT_NAME conformance)
set_target_properties(qconform_flags PROPERTIES EXPORT_NAME flags)
foreach(t qconform_reference qconform_conformance)
  get_target_property(_inc ${t} INTERFACE_INCLUDE_DIRECTORIES)
  target_include_directories(${t} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
if(TARGET qconform_optimized)
  set_target_properties(qconform_optimized PROPERTIES EXPORT_NAME optimized)
  target_include_directories(qconform_optimized INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  list(APPEND _qc_targets qconform_optimized)
endif()
if(TARGET qconform_plugin_host)
  set_target_properties(qconform_plugin_host PROPERTIES EXPORT_NAME plugin_host)
  list(APPEND _qc_targets qconform_plugin_host)
endif()

install(TARGETS ${_qc_targets} EXPORT qconformTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET qconform)
  install(TARGETS qconform RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
foreach(dir reference properties optimized plugin)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${dir}/include/qconform)
    # corpus.h belongs to qconform_corpus, which uses the (uninstalled) fuzz producer.
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/include/qconform DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
      PATTERN "corpus.h" EXCLUDE)
  endif()
endforeach()
install(EXPORT qconformTargets NAMESPACE qconform:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/qconform)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/qconformConfig.cmake.in
  ${PROJECT_BINARY_DIR}/qconformConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/qconform)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/qconformConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/qconformConfig.cmake ${PROJECT_BINARY_DIR}/qconformConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/qconform)

# The install test: install into a scratch prefix, then build and run a consumer against it.
if(QCONFORM_BUILD_TESTS)
  add_test(NAME install.consumer
    COMMAND ${CMAKE_COMMAND}
      -DBUILD_DIR=${PROJECT_BINARY_DIR}
      -DSOURCE_DIR=${PROJECT_SOURCE_DIR}/tests/install/consumer
      -DWORK_DIR=${PROJECT_BINARY_DIR}/install-test
      -DCXX=${CMAKE_CXX_COMPILER}
      "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}"
      -P ${PROJECT_SOURCE_DIR}/tests/install/run.cmake)
  set_tests_properties(install.consumer PROPERTIES LABELS install TIMEOUT 600)
endif()
